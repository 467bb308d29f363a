/* ticks: register a display link and print its ticks with the working time left.
 *
 *   ticks [-n COUNT] [-s SOCKET] [-e] [MIN MAX [PREFERRED]]
 *
 * Defaults: 60 ticks of an (80, 120, 120) link with the high-frame-rate
 * entitlement (-e is implied unless a range is given). The socket is found the
 * way framectl finds it unless -s names one. Build: make (build/ticks), or
 *   cc ticks.c $(pkg-config --cflags --libs framerate)
 */
#define _POSIX_C_SOURCE 200809L
#include <framerate.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double monotonic_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* the daemon's clock */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int usage(FILE *out) {
    fprintf(out, "usage: ticks [-n COUNT] [-s SOCKET] [-e] [MIN MAX [PREFERRED]]\n"
                 "  prints COUNT ticks (default 60) of a display link; -e declares the high-frame-rate entitlement\n");
    return out == stdout ? 0 : 2;
}

int main(int argc, char **argv) {
    long count = 60;
    const char *socket_path = NULL;
    fr_link_options options = FR_LINK_OPTIONS_INIT;
    options.range = (fr_range){ 80, 120, 120 };
    options.high_frame_rate = 1;
    options.label = "ticks.c";
    int positional = 0, entitlement = 0;
    double rates[3] = { 0, 0, 0 };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return usage(stdout);
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) count = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) socket_path = argv[++i];
        else if (strcmp(argv[i], "-e") == 0) entitlement = 1;
        else if (positional < 3) rates[positional++] = strtod(argv[i], NULL);
        else return usage(stderr);
    }
    if (positional == 1) return usage(stderr);
    if (positional >= 2) {
        options.range = (fr_range){ rates[0], rates[1], rates[2] };
        options.high_frame_rate = entitlement;
    }

    fr_conn *conn;
    int rc = fr_connect(socket_path, &conn);
    if (rc != FR_OK) {
        fprintf(stderr, "ticks: %s\n", *fr_connect_error() ? fr_connect_error() : fr_strerror(rc));
        return 1;
    }
    fr_link *link;
    rc = fr_register(conn, &options, &link);
    if (rc != FR_OK) {
        const fr_error *e = fr_last_error(conn);
        fprintf(stderr, "ticks: register: %s%s%s (%s%s%s)\n", fr_strerror(rc), rc == FR_ERPC ? ": " : "",
                rc == FR_ERPC ? e->message : "", rc == FR_ERPC ? e->status : "", *e->field ? ", field " : "", e->field);
        fr_close(conn);
        return 1;
    }
    for (long n = 0; n < count; n++) {
        fr_tick tick;
        rc = fr_next_tick(link, &tick, 5000);
        if (rc != FR_OK) {
            fr_error why;
            if (rc == FR_EENDED && fr_link_error(link, &why) == FR_EENDED)
                fprintf(stderr, "ticks: the link ended: %s (%s)\n", why.message, why.status);
            else
                fprintf(stderr, "ticks: %s\n", fr_strerror(rc));
            fr_close(conn);
            return 1;
        }
        double left_ms = (tick.target_timestamp - monotonic_now()) * 1000;
        printf("tick %6llu  %5.1f Hz  display %5.1f Hz  timestamp %.6f  %6.2f ms left  skipped %llu\n",
               (unsigned long long)tick.sequence, tick.callback_rate, tick.refresh_rate, tick.timestamp, left_ms,
               (unsigned long long)tick.skipped);
        fr_frame_done(link, tick.sequence); /* optional: overrun pacing */
    }
    fr_invalidate(link);
    fr_close(conn);
    return 0;
}
