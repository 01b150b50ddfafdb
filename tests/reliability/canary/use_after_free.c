/* A canary for AddressSanitizer: reads a heap block after freeing it. Built
 * with -fsanitize=address, it must be stopped with a heap-use-after-free
 * report; if it runs to the end, the sanitizer is not live. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  char* block = malloc(16);
  /* Read through a volatile copy: the compiler cannot see the use-after-free
   * (nor warn about it, nor drop it). */
  char* volatile freed = block;
  int value;
  if (!block) return 2;
  block[0] = 'k';
  free(block);
  value = freed[0];
  printf("read %d from a freed block: AddressSanitizer did not stop this program\n", value);
  return 0;
}
