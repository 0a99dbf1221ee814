import { TransactionHost } from '@nestjs-cls/transactional';
import { type TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { SecretBox, UnopenableSecret } from '../common/secret-box';
import { type Settings } from '../config/settings';
import { startCommandContext } from '../database/command-context';
import { ENTITIES } from '../entities';
import { TotpRepository } from '../auth/totp.repository';
import { NodesRepository } from './nodes.repository';

/**
 * `node dist/main.js --reseal-secrets`: after DATA_ENCRYPTION_KEY changed (the old key in
 * DATA_ENCRYPTION_KEY_PREVIOUS), seals every node's sealed values (SSH and REALITY private keys, the
 * agent's TLS key and the node's own secret) and every staff account's second-factor secret under
 * the current key, in one transaction, so the previous key can then be dropped. Returns the exit code; a value
 * that no given key opens changes nothing and names the setting to fix.
 */
export async function runResealSecrets(settings: Settings, databaseUrl: string): Promise<number> {
  const box = new SecretBox(settings.dataEncryptionKey, settings.dataEncryptionKeyPrevious);
  const context = await startCommandContext(settings, databaseUrl, ENTITIES, [
    NodesRepository,
    TotpRepository,
  ]);
  try {
    const nodes = context.get(NodesRepository);
    const txHost = context.get<TransactionHost<TransactionalAdapterTypeOrm>>(TransactionHost);
    const counts = await txHost.withTransaction(async () => {
      const all = await nodes.lockAllSealed();
      let resealed = 0;
      for (const { id, ...values } of all) {
        const stale = Object.values(values).some(
          (value) => value !== null && !box.isCurrent(value),
        );
        if (!stale) continue;
        const reseal = <T extends string | null>(value: T): T =>
          (value === null ? value : box.seal(box.open(value))) as T;
        await nodes.replaceSealed(id, {
          sshPrivateKeyEnc: reseal(values.sshPrivateKeyEnc),
          realityPrivateKeyEnc: reseal(values.realityPrivateKeyEnc),
          admissionKeyEnc: reseal(values.admissionKeyEnc),
          agentSecretEnc: reseal(values.agentSecretEnc),
        });
        resealed += 1;
      }
      const totp = context.get(TotpRepository);
      let factors = 0;
      for (const { userId, secretEnc } of await totp.lockAllSecrets()) {
        if (box.isCurrent(secretEnc)) continue;
        await totp.replaceSecret(userId, box.seal(box.open(secretEnc)));
        factors += 1;
      }
      return { resealed, total: all.length, factors };
    });
    process.stdout.write(
      `resealed the keys of ${counts.resealed} of ${counts.total} nodes and ${counts.factors} staff second factors under the current DATA_ENCRYPTION_KEY\n`,
    );
    return 0;
  } catch (error) {
    if (!(error instanceof UnopenableSecret)) throw error;
    console.error(
      'cannot reseal: a node key is sealed under a key that is neither DATA_ENCRYPTION_KEY nor in ' +
        'DATA_ENCRYPTION_KEY_PREVIOUS; nothing was changed',
    );
    return 1;
  } finally {
    await context.close();
  }
}
