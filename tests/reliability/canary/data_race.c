/* A canary for ThreadSanitizer: two threads increment one counter without a
 * lock or an atomic. Built with -fsanitize=thread, it must be stopped with a
 * data race report; if it runs to the end, the sanitizer is not live. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>

static long counter;

static void* add_many(void* unused) {
  int i;
  (void)unused;
  for (i = 0; i < 100000; ++i) ++counter;
  return NULL;
}

int main(void) {
  pthread_t a, b;
  if (pthread_create(&a, NULL, add_many, NULL) != 0 || pthread_create(&b, NULL, add_many, NULL) != 0) return 2;
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("counted %ld without a lock: ThreadSanitizer did not stop this program\n", counter);
  return 0;
}
