/* A tiny test harness: CHECK records failures and goes on. */
#ifndef FR_TEST_H
#define FR_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int test_failures;
static int test_checks;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        test_checks++;                                                                \
        if (!(cond)) {                                                                \
            test_failures++;                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

#define CHECK_MSG(cond, ...)                                                       \
    do {                                                                           \
        test_checks++;                                                             \
        if (!(cond)) {                                                             \
            test_failures++;                                                       \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                   \
        }                                                                          \
    } while (0)

#define RUN(test)                                                        \
    do {                                                                 \
        int before = test_failures;                                      \
        test();                                                          \
        printf("%s %s\n", test_failures == before ? "ok  " : "FAIL", #test); \
        fflush(stdout);                                                  \
    } while (0)

#endif
