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
#ifndef H2_TLS_POLICY_H
#define H2_TLS_POLICY_H

/* RFC 9113 section 9.2: HTTP/2 over TLS needs TLS 1.2 or later, and on
 * TLS 1.2 a cipher suite with ephemeral key exchange and an AEAD cipher
 * (everything else is on the blocklist of RFC 7540 Appendix A).
 * protocol and cipher are OpenSSL's names as mod_ssl reports them in
 * SSL_PROTOCOL and SSL_CIPHER. Returns 1 if h2 may be used. */
int h2_tls_policy_acceptable(const char *protocol, const char *cipher);

#endif
