/* perf script text without process ids (-F without +pid): each thread
 * stands as a process of its own, and the user is told how to get the
 * ids, by default (a notice, not a detail). */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "test_util.h"

TEST(perfscript_no_pid_notice)
{
    static const struct {
        const char *what, *text;
        int told;
    } cases[] = {
        {"without pids",
         "app 11 [000] 1.000000: 1000 cpu-clock:\n\t1000 main (/bin/app)\n\n"
         "app 12 [000] 1.001000: 1000 cpu-clock:\n\t1000 main (/bin/app)\n\n", 1},
        {"with pids",
         "app 10/11 [000] 1.000000: 1000 cpu-clock:\n\t1000 main (/bin/app)\n\n"
         "app 10/12 [000] 1.001000: 1000 cpu-clock:\n\t1000 main (/bin/app)\n\n", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        t_case("perfscript_no_pid_notice: %s", cases[i].what);
        pc_options o;
        pc_options_init(&o);
        log_capture_start(&o);
        pc_profile *p = NULL;
        pc_error err;
        T_EQ_INT(convert_bytes(cases[i].text, strlen(cases[i].text), &o, &p, &err), PC_OK);
        const char *log = log_capture_text();
        T_EQ_INT(strstr(log, "2 samples carry no process id") != NULL, cases[i].told);
        T_EQ_INT(strstr(log, "perf script -F +pid") != NULL, cases[i].told);
        pc_profile_free(p);
    }
}
