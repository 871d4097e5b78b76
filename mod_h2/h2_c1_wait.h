/* Copyright 2026 The mod_h2 authors
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */
#ifndef H2_C1_WAIT_H
#define H2_C1_WAIT_H

#include <apr_network_io.h>
#include <apr_pools.h>
#include <apr_time.h>

/* How a connection thread sleeps while its streams are with the workers:
 * until the client sends something or a worker wakes it. The wakeup fd
 * belongs to the thread, not to the connection: a thread serves one
 * connection at a time, and an idle connection (often most of them) then
 * costs no epoll instance, no wakeup pipe and none of their pool memory. */

typedef struct h2_c1_waiter h2_c1_waiter;

/* Child init, before the workers start: the waiters are closed when pchild
 * goes, after the workers (whose pool is a subpool) stopped. */
void h2_c1_wait_child_init(apr_pool_t *pchild);

/* The calling thread's waiter, made on first use; NULL if that failed. */
h2_c1_waiter *h2_c1_waiter_get(void);

/* Sleep until sock (if not NULL) is readable, h2_c1_waiter_wake() was
 * called or timeout passed. A wakeup that came before the call ends it at
 * once. Returns H2_WAITED_* flags. */
int h2_c1_waiter_wait(h2_c1_waiter *w, apr_socket_t *sock,
                      apr_interval_time_t timeout);
#define H2_WAITED_WOKEN 1   /* it consumed a wakeup */
#define H2_WAITED_INPUT 2   /* sock may have input (readable, an error, or
                             * not known); without it, sock had none when
                             * the wait ended */

/* Wake the thread sleeping in (or about to enter) h2_c1_waiter_wait();
 * nothing for NULL. */
void h2_c1_waiter_wake(h2_c1_waiter *w);

/* Forget a wakeup that was not needed after all. */
void h2_c1_waiter_drain(h2_c1_waiter *w);

#endif
