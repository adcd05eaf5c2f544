// The mount's request loop (included by shim.h; this is still the one place that calls libfuse).
//
// A fixed set of threads take turns as the one receiver, which reads requests from /dev/fuse
// (made non-blocking) and, after each request, keeps reading for a short spin before it sleeps
// in poll(). `cat` or `tar` over many files sends its next OPEN a few microseconds after the
// last reply, and a receiver still awake takes it without the wake-up of a sleeping thread on
// the other core (README, "The mount"). Requests answered from memory run on the receiver
// itself (`CFuse3_quick`). For any other one (saves, renames, listings, lookups that may load a
// zone) the receiver hands the receiving to a waiting thread and serves the request itself, so
// a slow save never holds up a `cat`, and the receiver never waits on anything another thread
// holds.
//
// Lock order: `CFuse3_loop.lock` guards only `receiving` and `stopping`; nothing is called with
// it held.
#ifndef CFUSE3_LOOP_H
#define CFUSE3_LOOP_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/// The kernel's request header and release arguments (linux/fuse.h; stable ABI). Declared here
/// under our own names: linux/fuse.h and libfuse's headers define some of the same macros.
struct CFuse3_in_header { uint32_t len, opcode; uint64_t unique, nodeid; uint32_t uid, gid, pid; uint16_t total_extlen, padding; };
struct CFuse3_release_in { uint64_t fh; uint32_t flags, release_flags; uint64_t lock_owner; };

enum {
    CFuse3_FORGET = 2, CFuse3_GETATTR = 3, CFuse3_OPEN = 14, CFuse3_READ = 15,
    CFuse3_STATFS = 17, CFuse3_RELEASE = 18, CFuse3_GETXATTR = 22, CFuse3_LISTXATTR = 23,
    CFuse3_INIT = 26, CFuse3_OPENDIR = 27, CFuse3_RELEASEDIR = 29, CFuse3_ACCESS = 34,
    CFuse3_INTERRUPT = 36, CFuse3_DESTROY = 38, CFuse3_BATCH_FORGET = 42,
};

/// Whether a request only reads the view's memory and so runs on the receiver: opens,
/// attributes, reads of an open file's text, forgets, and the release of a file opened
/// read-only (one opened for writing may save at its release). Lookups and listings may load
/// a whole zone, so they are served off the receiver with everything else.
static inline int CFuse3_quick(const void *mem, size_t size) {
    if (size < sizeof(struct CFuse3_in_header)) return 0;
    const struct CFuse3_in_header *in = (const struct CFuse3_in_header *)mem;
    switch (in->opcode) {
    case CFuse3_INIT: case CFuse3_DESTROY: case CFuse3_INTERRUPT: case CFuse3_FORGET: case CFuse3_BATCH_FORGET:
    case CFuse3_GETATTR: case CFuse3_OPEN: case CFuse3_READ: case CFuse3_STATFS: case CFuse3_ACCESS:
    case CFuse3_OPENDIR: case CFuse3_RELEASEDIR: case CFuse3_GETXATTR: case CFuse3_LISTXATTR:
        return 1;
    case CFuse3_RELEASE: {
        if (size < sizeof *in + sizeof(struct CFuse3_release_in)) return 0;
        const struct CFuse3_release_in *r = (const struct CFuse3_release_in *)(in + 1);
        return (r->flags & O_ACCMODE) == O_RDONLY;
    }
    default:
        return 0;
    }
}

struct CFuse3_loop {
    struct fuse_session *se;
    int fd;                 // /dev/fuse, non-blocking
    int wake;               // eventfd, written to stop: wakes a receiver asleep in poll()
    long spin_ns;
    pthread_mutex_t lock;   // guards receiving and stopping
    pthread_cond_t vacant;  // signalled when no thread is the receiver, or when stopping
    int receiving;          // a thread is the receiver
    int stopping;
    sem_t finished;         // posted when a receiver stops the loop
    int error;              // the read error that ended the loop (negative errno), or 0
};

static inline long CFuse3_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

/// The receiver's part: reads requests, answers the quick ones, spins a moment after each and
/// then sleeps in poll(). Returns 1 with a request that may wait in `buf`, for the caller to
/// serve once another thread is the receiver; 0 when the loop is to end.
static inline int CFuse3_receive(struct CFuse3_loop *l, struct fuse_buf *buf) {
    long last = 0;  // a thread taking over sleeps at once if nothing waits: only answers spin
    while (!fuse_session_exited(l->se)) {
        int res = fuse_session_receive_buf(l->se, buf);
        if (res == -EAGAIN) {
            if (CFuse3_now_ns() - last < l->spin_ns) { sched_yield(); continue; }
            struct pollfd p[2] = { { .fd = l->fd, .events = POLLIN }, { .fd = l->wake, .events = POLLIN } };
            if (poll(p, 2, -1) < 0 && errno != EINTR) { l->error = -errno; break; }
            if (p[1].revents) break;
            last = CFuse3_now_ns();
            continue;
        }
        if (res == -EINTR) continue;
        if (res <= 0) {  // 0: unmounted (libfuse has marked the session exited)
            if (res < 0) l->error = res;
            break;
        }
        if (!CFuse3_quick(buf->mem, (size_t)res)) return 1;
        fuse_session_process_buf(l->se, buf);
        last = CFuse3_now_ns();
    }
    fuse_session_exit(l->se);  // whatever stopped the receiver stops the loop
    return 0;
}

/// Every thread of the loop: the receiver while no other thread is, and when its request may
/// wait, it hands the receiving on (one wake-up of a waiting thread, which is not on this
/// request's path) and serves the request itself, still warm in its cache.
static void *CFuse3_thread(void *arg) {
    struct CFuse3_loop *l = (struct CFuse3_loop *)arg;
    struct fuse_buf buf;
    memset(&buf, 0, sizeof buf);
    for (;;) {
        pthread_mutex_lock(&l->lock);
        while (l->receiving && !l->stopping) pthread_cond_wait(&l->vacant, &l->lock);
        if (l->stopping) { pthread_mutex_unlock(&l->lock); break; }
        l->receiving = 1;
        pthread_mutex_unlock(&l->lock);
        int got = CFuse3_receive(l, &buf);
        pthread_mutex_lock(&l->lock);
        l->receiving = 0;
        if (got) pthread_cond_signal(&l->vacant);
        else { l->stopping = 1; pthread_cond_broadcast(&l->vacant); }
        pthread_mutex_unlock(&l->lock);
        if (!got) { sem_post(&l->finished); break; }
        fuse_session_process_buf(l->se, &buf);
    }
    free(buf.mem);
    return NULL;
}

/// Serves the session with `threads` threads until it is unmounted or exits (a signal from
/// fuse_set_signal_handlers); returns 0 or a negative errno.
static inline int CFuse3_session_loop(struct fuse_session *se, int threads, int spin_us) {
    struct CFuse3_loop *l = (struct CFuse3_loop *)calloc(1, sizeof *l);
    if (l == NULL) return -ENOMEM;
    l->se = se;
    l->fd = fuse_session_fd(se);
    l->spin_ns = (long)spin_us * 1000;
    l->wake = eventfd(0, EFD_CLOEXEC);
    int flags = fcntl(l->fd, F_GETFL);
    if (l->wake < 0 || flags < 0 || fcntl(l->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        int e = -errno;
        if (l->wake >= 0) close(l->wake);
        free(l);
        return e;
    }
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->vacant, NULL);
    sem_init(&l->finished, 0, 0);
    // Signals go to this thread only, so they interrupt its wait below.
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM); sigaddset(&set, SIGINT); sigaddset(&set, SIGHUP); sigaddset(&set, SIGQUIT);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    pthread_t *pool = (pthread_t *)calloc((size_t)(threads > 0 ? threads : 1), sizeof(pthread_t));
    int rc = pool == NULL ? -ENOMEM : 0, started = 0;
    for (int i = 0; rc == 0 && i < threads; i++) {
        if (pthread_create(&pool[i], NULL, CFuse3_thread, l) != 0) rc = -EAGAIN; else started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) fuse_session_exit(se);
    while (!fuse_session_exited(se)) sem_wait(&l->finished);
    pthread_mutex_lock(&l->lock);
    l->stopping = 1;
    pthread_cond_broadcast(&l->vacant);
    pthread_mutex_unlock(&l->lock);
    uint64_t one = 1;
    if (write(l->wake, &one, sizeof one) < 0) { /* cannot fail for an eventfd below its maximum */ }
    for (int i = 0; i < started; i++) pthread_join(pool[i], NULL);
    if (rc == 0) rc = l->error;
    free(pool);
    close(l->wake);
    sem_destroy(&l->finished);
    pthread_cond_destroy(&l->vacant);
    pthread_mutex_destroy(&l->lock);
    free(l);
    return rc;
}

#endif
