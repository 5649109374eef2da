/*
 * linkage.c — a library's link interface is complete. tests/unit.cmake
 * links this program with one library as a whole archive (every object
 * file of it, used or not) and with nothing but what that library's
 * CMake target declares; a dependency the target leaves out is then an
 * undefined reference at link time, so the build of this test fails. It
 * runs to say the link succeeded.
 */
#include <stdio.h>

int main(void) {
  puts("linked");
  return 0;
}
