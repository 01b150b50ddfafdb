/* A canary for UndefinedBehaviorSanitizer: adds one to INT_MAX. Built with
 * -fsanitize=undefined -fno-sanitize-recover, it must be stopped with a
 * signed integer overflow report; if it runs to the end, the sanitizer is
 * not live. */
#include <limits.h>
#include <stdio.h>

int main(void) {
  /* Volatile: the sum is computed at run time, not folded by the compiler. */
  volatile int largest = INT_MAX;
  const int sum = largest + 1;
  printf("INT_MAX + 1 gave %d: UndefinedBehaviorSanitizer did not stop this program\n", sum);
  return 0;
}
