// @peculiar/x509 resolves its parts through tsyringe, which needs the metadata polyfill first.
import 'reflect-metadata';
import { createHash, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import {
  BasicConstraintsExtension,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  PemConverter,
  SubjectAlternativeNameExtension,
  X509CertificateGenerator,
} from '@peculiar/x509';
import { sha256 } from '../common/secrets';

/** What the node agent serves admission with; clients pin `certSha256`, no CA is involved. */
export interface AdmissionCertificate {
  /** PEM of the self-signed certificate (public). */
  certPem: string;
  /** PEM (PKCS#8) of its private key: sealed before it is stored, never returned. */
  keyPem: string;
  /** Hex SHA-256 of the certificate's DER, lower case: what a routing entry carries. */
  certSha256: string;
}

type SelfSignedParams = Parameters<typeof X509CertificateGenerator.createSelfSigned>[0];

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
/** Pinned, not checked against a CA or a clock that matters: long-lived, renewed by re-creating. */
const VALID_YEARS = 20;

/**
 * A fresh ECDSA P-256 key and a self-signed certificate for the agent's admission listener, with
 * the node's tunnel host as its subject alternative name (an IP address or a DNS name).
 */
export async function generateAdmissionCertificate(
  tunnelHost: string,
  now = new Date(),
): Promise<AdmissionCertificate> {
  const keys = await webcrypto.subtle.generateKey(ECDSA, true, ['sign', 'verify']);
  const notBefore = new Date(now.getTime() - 60_000);
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + VALID_YEARS);
  const cert = await X509CertificateGenerator.createSelfSigned(
    {
      name: [{ CN: [tunnelHost] }],
      notBefore,
      notAfter,
      signingAlgorithm: ECDSA,
      keys: keys as unknown as SelfSignedParams['keys'],
      extensions: [
        new BasicConstraintsExtension(false, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true),
        new ExtendedKeyUsageExtension(['1.3.6.1.5.5.7.3.1']), // serverAuth
        new SubjectAlternativeNameExtension([
          { type: isIP(tunnelHost) ? 'ip' : 'dns', value: tunnelHost },
        ]),
      ],
    },
    webcrypto as unknown as Parameters<typeof X509CertificateGenerator.createSelfSigned>[1],
  );
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return {
    certPem: `${cert.toString('pem')}\n`,
    keyPem: `${PemConverter.encode(pkcs8, 'PRIVATE KEY')}\n`,
    certSha256: createHash('sha256').update(Buffer.from(cert.rawData)).digest('hex'),
  };
}

/** A node's own secret for `/internal/*`: 32 random bytes, base64url. */
export function generateNodeSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored to find a node by its secret: hex SHA-256 (the secret itself only sealed). */
export function nodeSecretHash(secret: string): string {
  return sha256(secret).toString('hex');
}
