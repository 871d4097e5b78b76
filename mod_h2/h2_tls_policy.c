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
/* H2ModernTLSOnly: which TLS versions and ciphers HTTP/2 accepts (pure
 * logic). */

#include <string.h>
#include "h2_tls_policy.h"

int h2_tls_policy_acceptable(const char *protocol, const char *cipher)
{
    if (!protocol || !cipher) {
        return 0;
    }
    if (!strcmp(protocol, "TLSv1.3")) {
        return 1;   /* every TLS 1.3 suite is ephemeral and AEAD */
    }
    if (strcmp(protocol, "TLSv1.2")) {
        return 0;   /* SSLv3, TLS 1.0, 1.1 */
    }
    /* OpenSSL names TLS 1.2 suites KX-AUTH-CIPHER-MAC */
    if (strncmp(cipher, "ECDHE-", 6) && strncmp(cipher, "DHE-", 4)) {
        return 0;   /* static RSA, PSK, anonymous, ... */
    }
    if (strstr(cipher, "-PSK-")) {
        return 0;
    }
    return strstr(cipher, "GCM") || strstr(cipher, "CHACHA20")
        || strstr(cipher, "-CCM");
}
