// The mount's request loop, on libfuse's fuse_session_receive_buf and fuse_session_process_buf.
//
// A fixed set of threads take turns as the one receiver, which reads requests from /dev/fuse
// (made non-blocking) and, after each request, keeps reading for a short spin before it sleeps
// in poll(). `cat` or `tar` over many files sends its next OPEN a few microseconds after the
// last reply, and a receiver still awake takes it without the wake-up of a sleeping thread on
// the other core (docs/Performance.md, "The mount"). The receiver serves requests itself. One that is
// about to wait (a save, a delete, a zone made or removed, a zone's first load, a synchronous
// invalidation) first hands the receiving to a waiting thread with `CFuse3_loop_will_block`
// (the view says so through `KernelNotifier.willWait()`); listings, long for a large folder,
// hand it on before they start (`CFuse3_heavy`). So a slow save never holds up a `cat`, and a
// request that does not wait costs no wake-up of another thread. The receiver may still wait
// briefly on the view's own locks, never on anything that needs another FUSE request
// answered (the view takes no lock across a call that waits for the kernel).
//
// Lock order: `CFuse3_loop.lock` guards `receiver` (written under it; the receiver reads its
// own entry without it) and `stopping`; nothing is called with it held.
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "CFuse3Loop.h"

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

/// The kernel's request header and the opcodes used here (linux/fuse.h; stable ABI). Declared
/// under our own names: linux/fuse.h and libfuse's headers define some of the same macros.
struct CFuse3_in_header { uint32_t len, opcode; uint64_t unique, nodeid; uint32_t uid, gid, pid; uint16_t total_extlen, padding; };

enum { CFuse3_SETATTR = 4, CFuse3_READDIR = 28, CFuse3_READDIRPLUS = 44 };

/// The start of a SETATTR request's body (linux/fuse.h's fuse_setattr_in), and its flag that
/// says `lock_owner` is set (a truncation: the caller's descriptor table).
struct CFuse3_setattr_in_head { uint32_t valid, padding; uint64_t fh, size, lock_owner; };
enum { CFuse3_FATTR_LOCKOWNER = 1 << 9 };

/// The lock owner of the SETATTR this thread serves, which libfuse does not hand to the
/// setattr callback; 0 when the request says none. Set before each request is processed.
static __thread uint64_t CFuse3_setattr_owner;

uint64_t CFuse3_loop_setattr_owner(void) { return CFuse3_setattr_owner; }

/// Notes what `CFuse3_loop_setattr_owner` answers while the request in `mem` is served.
static inline void CFuse3_note_request(const void *mem, size_t size) {
    CFuse3_setattr_owner = 0;
    if (size < sizeof(struct CFuse3_in_header) + sizeof(struct CFuse3_setattr_in_head)) return;
    if (((const struct CFuse3_in_header *)mem)->opcode != CFuse3_SETATTR) return;
    const struct CFuse3_setattr_in_head *in =
        (const struct CFuse3_setattr_in_head *)((const char *)mem + sizeof(struct CFuse3_in_header));
    if (in->valid & CFuse3_FATTR_LOCKOWNER) CFuse3_setattr_owner = in->lock_owner;
}

/// Whether a request hands the receiving on before it starts: a listing, which renders a
/// whole folder's entries and can take milliseconds without waiting on anything. Everything
/// else is served on the receiver and hands it on only if it comes to wait.
static inline int CFuse3_heavy(const void *mem, size_t size) {
    if (size < sizeof(struct CFuse3_in_header)) return 1;
    uint32_t opcode = ((const struct CFuse3_in_header *)mem)->opcode;
    return opcode == CFuse3_READDIR || opcode == CFuse3_READDIRPLUS;
}

struct CFuse3_loop {
    struct fuse_session *se;
    int threads;
    int fd;                 // /dev/fuse, non-blocking
    int wake;               // eventfd, written to stop: wakes a receiver asleep in poll()
    long spin_ns;
    pthread_mutex_t lock;   // guards receiver and stopping
    pthread_cond_t vacant;  // signalled when no thread is the receiver, or when stopping
    uint64_t receiver;      // the receiving thread (its pthread_self), 0 when none
    int stopping;
    sem_t finished;         // posted when a receiver stops the loop
    int error;              // the read error that ended the loop (negative errno), or 0
};

static inline long CFuse3_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static inline uint64_t CFuse3_self(void) { return (uint64_t)pthread_self(); }

/// Called by a request about to wait, on whatever thread serves it: when that thread is the
/// receiver it hands the receiving to a waiting thread first, so requests keep being read
/// while it waits. Anywhere else (a worker, the watcher's thread) it does nothing.
void CFuse3_loop_will_block(struct CFuse3_loop *l) {
    uint64_t self = CFuse3_self();
    if (__atomic_load_n(&l->receiver, __ATOMIC_ACQUIRE) != self) return;
    pthread_mutex_lock(&l->lock);
    __atomic_store_n(&l->receiver, 0, __ATOMIC_RELEASE);
    pthread_cond_signal(&l->vacant);
    pthread_mutex_unlock(&l->lock);
}

/// The receiver's part: reads requests, serves them, spins a moment after each and then
/// sleeps in poll(). Returns 1 with a heavy request in `buf` for the caller to serve once it
/// has handed the receiving on; 2 when a request it served handed the receiving on while it
/// waited; 0 when the loop is to end.
static inline int CFuse3_receive(struct CFuse3_loop *l, struct fuse_buf *buf, uint64_t self) {
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
        if (CFuse3_heavy(buf->mem, (size_t)res)) return 1;
        CFuse3_note_request(buf->mem, (size_t)res);
        fuse_session_process_buf(l->se, buf);
        if (__atomic_load_n(&l->receiver, __ATOMIC_ACQUIRE) != self) return 2;
        last = CFuse3_now_ns();
    }
    fuse_session_exit(l->se);  // whatever stopped the receiver stops the loop
    return 0;
}

/// Every thread of the loop: the receiver while no other thread is; a heavy request, or one
/// that came to wait, it finishes after handing the receiving on, and then waits its turn.
static void *CFuse3_thread(void *arg) {
    struct CFuse3_loop *l = (struct CFuse3_loop *)arg;
    uint64_t self = CFuse3_self();
    struct fuse_buf buf;
    memset(&buf, 0, sizeof buf);
    for (;;) {
        pthread_mutex_lock(&l->lock);
        while (l->receiver != 0 && !l->stopping) pthread_cond_wait(&l->vacant, &l->lock);
        if (l->stopping) { pthread_mutex_unlock(&l->lock); break; }
        __atomic_store_n(&l->receiver, self, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&l->lock);
        int got = CFuse3_receive(l, &buf, self);
        if (got == 0) {
            pthread_mutex_lock(&l->lock);
            __atomic_store_n(&l->receiver, 0, __ATOMIC_RELEASE);
            l->stopping = 1;
            pthread_cond_broadcast(&l->vacant);
            pthread_mutex_unlock(&l->lock);
            sem_post(&l->finished);
            break;
        }
        if (got == 1) {
            CFuse3_loop_will_block(l);
            CFuse3_note_request(buf.mem, buf.size);
            fuse_session_process_buf(l->se, &buf);
        }
    }
    free(buf.mem);
    return NULL;
}

/// A loop for `se` with `threads` threads; NULL when it cannot be made (errno says why).
struct CFuse3_loop *CFuse3_loop_create(struct fuse_session *se, int threads, int spin_us) {
    struct CFuse3_loop *l = (struct CFuse3_loop *)calloc(1, sizeof *l);
    if (l == NULL) return NULL;
    l->se = se;
    l->threads = threads > 0 ? threads : 1;
    l->fd = fuse_session_fd(se);
    l->spin_ns = (long)spin_us * 1000;
    l->wake = eventfd(0, EFD_CLOEXEC);
    int flags = fcntl(l->fd, F_GETFL);
    if (l->wake < 0 || flags < 0 || fcntl(l->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        int e = errno;
        if (l->wake >= 0) close(l->wake);
        free(l);
        errno = e;
        return NULL;
    }
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->vacant, NULL);
    sem_init(&l->finished, 0, 0);
    return l;
}

/// Serves the session until it is unmounted or exits (a signal from fuse_set_signal_handlers);
/// returns 0 or a negative errno. Every thread has ended when it returns.
int CFuse3_loop_run(struct CFuse3_loop *l) {
    // Signals go to this thread only, so they interrupt its wait below.
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM); sigaddset(&set, SIGINT); sigaddset(&set, SIGHUP); sigaddset(&set, SIGQUIT);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    pthread_t *pool = (pthread_t *)calloc((size_t)l->threads, sizeof(pthread_t));
    int rc = pool == NULL ? -ENOMEM : 0, started = 0;
    for (int i = 0; rc == 0 && i < l->threads; i++) {
        if (pthread_create(&pool[i], NULL, CFuse3_thread, l) != 0) rc = -EAGAIN; else started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) fuse_session_exit(l->se);
    while (!fuse_session_exited(l->se)) sem_wait(&l->finished);
    pthread_mutex_lock(&l->lock);
    l->stopping = 1;
    pthread_cond_broadcast(&l->vacant);
    pthread_mutex_unlock(&l->lock);
    uint64_t one = 1;
    if (write(l->wake, &one, sizeof one) < 0) { /* cannot fail for an eventfd below its maximum */ }
    for (int i = 0; i < started; i++) pthread_join(pool[i], NULL);
    free(pool);
    return rc != 0 ? rc : l->error;
}

void CFuse3_loop_destroy(struct CFuse3_loop *l) {
    close(l->wake);
    sem_destroy(&l->finished);
    pthread_cond_destroy(&l->vacant);
    pthread_mutex_destroy(&l->lock);
    free(l);
}
