import { createPrivateKey, X509Certificate } from 'node:crypto';
import {
  generateAdmissionCertificate,
  generateNodeSecret,
  nodeSecretHash,
} from './node-credentials';

describe("the agent's certificate and the node's secret", () => {
  it('a self-signed certificate for the tunnel address, its key, and the SHA-256 clients pin', async () => {
    const made = await generateAdmissionCertificate('203.0.113.7');
    const cert = new X509Certificate(made.certPem);
    expect(cert.subjectAltName).toBe('IP Address:203.0.113.7');
    expect(cert.ca).toBe(false);
    expect(cert.verify(cert.publicKey)).toBe(true); // self-signed
    expect(cert.checkPrivateKey(createPrivateKey(made.keyPem))).toBe(true);
    expect(made.certSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(made.certSha256).toBe(cert.fingerprint256.replace(/:/g, '').toLowerCase());
    expect(new Date(cert.validTo).getTime()).toBeGreaterThan(Date.now() + 10 * 365 * 86_400_000);

    const named = new X509Certificate(
      (await generateAdmissionCertificate('node.example.com')).certPem,
    );
    expect(named.subjectAltName).toBe('DNS:node.example.com');
    expect((await generateAdmissionCertificate('203.0.113.7')).certSha256).not.toBe(
      made.certSha256,
    );
  });

  it('a node secret is 32 random bytes; only its SHA-256 is used to find it', () => {
    const secret = generateNodeSecret();
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    expect(generateNodeSecret()).not.toBe(secret);
    expect(nodeSecretHash(secret)).toMatch(/^[0-9a-f]{64}$/);
    expect(nodeSecretHash(secret)).not.toContain(secret);
  });
});
