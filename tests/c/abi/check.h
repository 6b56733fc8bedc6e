/* The CHECK macros of the ABI tests: a failed check prints the condition and the last error and counts. */
#ifndef UFORM_ABI_CHECK_H
#define UFORM_ABI_CHECK_H

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            fprintf(stderr, "    %s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond,                \
                    uform_last_error_message());                                                                       \
        }                                                                                                              \
    } while (0)

#define CHECK_STATUS(call, expected) CHECK((call) == (expected))

static int says(const char *needle) { return strstr(uform_last_error_message(), needle) != NULL; }

#define RUN(test)                                                                                                      \
    do {                                                                                                               \
        int before = failures;                                                                                         \
        test();                                                                                                        \
        printf("%s %s\n", failures == before ? "ok  " : "FAIL", #test);                                               \
    } while (0)

#endif
