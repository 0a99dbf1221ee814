/**
 * What a partner code may be. Codes match in any case (`p_ACME` and `?partner=Acme` are the code
 * `acme`): new ones are stored in lower case, and lookups compare lower case. No imports: the web
 * app checks a `?partner=` code with it too.
 */
export const PARTNER_CODE_PATTERN = /^[A-Za-z0-9_-]{3,32}$/;
