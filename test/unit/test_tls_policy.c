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
/* H2ModernTLSOnly: TLS 1.2+ and no RFC 7540 Appendix A cipher. */
#include "h2_tls_policy.h"
#include "unit.h"

int main(void)
{
    CHECK(h2_tls_policy_acceptable("TLSv1.3", "TLS_AES_128_GCM_SHA256"));
    CHECK(h2_tls_policy_acceptable("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"));
    CHECK(h2_tls_policy_acceptable("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"));
    CHECK(h2_tls_policy_acceptable("TLSv1.2", "ECDHE-ECDSA-CHACHA20-POLY1305"));
    CHECK(h2_tls_policy_acceptable("TLSv1.2", "DHE-RSA-AES256-GCM-SHA384"));
    CHECK(h2_tls_policy_acceptable("TLSv1.2", "DHE-RSA-AES128-CCM"));
    /* blocklisted: no forward secrecy, or not AEAD */
    CHECK(!h2_tls_policy_acceptable("TLSv1.2", "AES128-SHA"));
    CHECK(!h2_tls_policy_acceptable("TLSv1.2", "AES128-GCM-SHA256"));
    CHECK(!h2_tls_policy_acceptable("TLSv1.2", "ECDHE-RSA-AES128-SHA256"));
    CHECK(!h2_tls_policy_acceptable("TLSv1.2", "ECDHE-RSA-AES256-SHA"));
    CHECK(!h2_tls_policy_acceptable("TLSv1.2", "DHE-PSK-AES128-GCM-SHA256"));
    CHECK(!h2_tls_policy_acceptable("TLSv1.2", "ECDHE-PSK-CHACHA20-POLY1305"));
    /* protocols below TLS 1.2 */
    CHECK(!h2_tls_policy_acceptable("TLSv1.1", "ECDHE-RSA-AES128-GCM-SHA256"));
    CHECK(!h2_tls_policy_acceptable("TLSv1", "ECDHE-RSA-AES128-SHA"));
    CHECK(!h2_tls_policy_acceptable("SSLv3", "AES128-SHA"));
    CHECK(!h2_tls_policy_acceptable(NULL, "ECDHE-RSA-AES128-GCM-SHA256"));
    CHECK(!h2_tls_policy_acceptable("TLSv1.3", NULL));
    return unit_done("test_tls_policy");
}
