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
/* APR's atomics, made visible to ThreadSanitizer: preloaded into httpd
 * with the TSan runtime under H2_SANITIZE=tsan (sandbox.py), built with
 * -fsanitize=thread by `make -C sandbox build-tsan`.
 *
 * libapr is not instrumented, so TSan sees neither its atomic operations
 * nor the order they give. httpd hands memory between threads with them:
 * the event MPM recycles a connection's pool to the next connection
 * through apr_atomic_casptr(), and mod_h2's status rows change owner by
 * apr_atomic_cas32()/set32(). Every first write of a new connection's
 * session into its recycled pool then looked like a race with the last
 * write of the connection before (hundreds of reports per run, all of
 * this one kind). Defined here, the same functions override libapr's for
 * every caller that links them from there (httpd, its modules, mod_h2),
 * and TSan sees them as the sequentially consistent atomics APR's own
 * (GCC builtins) are. */

#include <apr_atomic.h>

#define SC __ATOMIC_SEQ_CST

APR_DECLARE(apr_status_t) apr_atomic_init(apr_pool_t *p)
{
    (void)p;
    return APR_SUCCESS;
}

APR_DECLARE(apr_uint32_t) apr_atomic_read32(volatile apr_uint32_t *mem)
{
    return __atomic_load_n(mem, SC);
}

APR_DECLARE(void) apr_atomic_set32(volatile apr_uint32_t *mem, apr_uint32_t val)
{
    __atomic_store_n(mem, val, SC);
}

APR_DECLARE(apr_uint32_t) apr_atomic_add32(volatile apr_uint32_t *mem, apr_uint32_t val)
{
    return __atomic_fetch_add(mem, val, SC);
}

APR_DECLARE(void) apr_atomic_sub32(volatile apr_uint32_t *mem, apr_uint32_t val)
{
    __atomic_fetch_sub(mem, val, SC);
}

APR_DECLARE(apr_uint32_t) apr_atomic_inc32(volatile apr_uint32_t *mem)
{
    return __atomic_fetch_add(mem, 1, SC);
}

/* zero when the value became zero */
APR_DECLARE(int) apr_atomic_dec32(volatile apr_uint32_t *mem)
{
    return __atomic_sub_fetch(mem, 1, SC) != 0;
}

APR_DECLARE(apr_uint32_t) apr_atomic_cas32(volatile apr_uint32_t *mem, apr_uint32_t with,
                                           apr_uint32_t cmp)
{
    __atomic_compare_exchange_n(mem, &cmp, with, 0, SC, SC);
    return cmp;    /* the old value, whether it was swapped or not */
}

APR_DECLARE(apr_uint32_t) apr_atomic_xchg32(volatile apr_uint32_t *mem, apr_uint32_t val)
{
    return __atomic_exchange_n(mem, val, SC);
}

APR_DECLARE(apr_uint64_t) apr_atomic_read64(volatile apr_uint64_t *mem)
{
    return __atomic_load_n(mem, SC);
}

APR_DECLARE(void) apr_atomic_set64(volatile apr_uint64_t *mem, apr_uint64_t val)
{
    __atomic_store_n(mem, val, SC);
}

APR_DECLARE(apr_uint64_t) apr_atomic_add64(volatile apr_uint64_t *mem, apr_uint64_t val)
{
    return __atomic_fetch_add(mem, val, SC);
}

APR_DECLARE(void) apr_atomic_sub64(volatile apr_uint64_t *mem, apr_uint64_t val)
{
    __atomic_fetch_sub(mem, val, SC);
}

APR_DECLARE(apr_uint64_t) apr_atomic_inc64(volatile apr_uint64_t *mem)
{
    return __atomic_fetch_add(mem, 1, SC);
}

APR_DECLARE(int) apr_atomic_dec64(volatile apr_uint64_t *mem)
{
    return __atomic_sub_fetch(mem, 1, SC) != 0;
}

APR_DECLARE(apr_uint64_t) apr_atomic_cas64(volatile apr_uint64_t *mem, apr_uint64_t with,
                                           apr_uint64_t cmp)
{
    __atomic_compare_exchange_n(mem, &cmp, with, 0, SC, SC);
    return cmp;
}

APR_DECLARE(apr_uint64_t) apr_atomic_xchg64(volatile apr_uint64_t *mem, apr_uint64_t val)
{
    return __atomic_exchange_n(mem, val, SC);
}

APR_DECLARE(void *) apr_atomic_casptr(volatile void **mem, void *with, const void *cmp)
{
    void *old = (void *)cmp;
    __atomic_compare_exchange_n((void **)mem, &old, with, 0, SC, SC);
    return old;
}

APR_DECLARE(void *) apr_atomic_xchgptr(volatile void **mem, void *with)
{
    return __atomic_exchange_n((void **)mem, with, SC);
}
