// The mount's request loop: a fixed set of threads taking turns as the one receiver of
// /dev/fuse (loop.c says how and why). The only C logic of the FUSE layer; CFuse3 holds
// libfuse's own API and inline wrappers for what Swift cannot call.
#ifndef CFUSE3_LOOP_PUBLIC_H
#define CFUSE3_LOOP_PUBLIC_H

#include <stdint.h>

struct fuse_session;
struct CFuse3_loop;

/// A loop of `threads` threads over `se`, whose receiver keeps reading for `spin_us` after
/// each answer; NULL when /dev/fuse cannot be set up (errno says why).
struct CFuse3_loop *CFuse3_loop_create(struct fuse_session *se, int threads, int spin_us);

/// Serves the session until it is unmounted or exits (a signal from fuse_set_signal_handlers);
/// returns 0 or a negative errno. Every thread has ended when it returns.
int CFuse3_loop_run(struct CFuse3_loop *l);

/// Frees the loop once `CFuse3_loop_run` has returned.
void CFuse3_loop_destroy(struct CFuse3_loop *l);

/// Called by a request about to wait (a save, a delete, a zone's first load): hands the
/// receiving to another thread first, so other requests go on.
void CFuse3_loop_will_block(struct CFuse3_loop *l);

/// The lock owner (the caller's descriptor table) of the SETATTR request the calling thread
/// serves, when it truncates; 0 otherwise. libfuse's setattr callback is not given it.
uint64_t CFuse3_loop_setattr_owner(void);

#endif
