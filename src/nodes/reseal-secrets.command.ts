import { TransactionHost } from '@nestjs-cls/transactional';
import { type TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { SecretBox, UnopenableSecret } from '../common/secret-box';
import { type Settings } from '../config/settings';
import { startCommandContext } from '../database/command-context';
import { NodesRepository } from './nodes.repository';

/**
 * `node dist/main.js --reseal-secrets`: after DATA_ENCRYPTION_KEY changed (the old key in
 * DATA_ENCRYPTION_KEY_PREVIOUS), seals every node's SSH and REALITY private keys under the current
 * key, in one transaction, so the previous key can then be dropped. Returns the exit code; a value
 * that no given key opens changes nothing and names the setting to fix.
 */
export async function runResealSecrets(settings: Settings, databaseUrl: string): Promise<number> {
  const box = new SecretBox(settings.dataEncryptionKey, settings.dataEncryptionKeyPrevious);
  const context = await startCommandContext(settings, databaseUrl, [NodesRepository]);
  try {
    const nodes = context.get(NodesRepository);
    const txHost = context.get<TransactionHost<TransactionalAdapterTypeOrm>>(TransactionHost);
    const counts = await txHost.withTransaction(async () => {
      const all = await nodes.lockAllSecrets();
      let resealed = 0;
      for (const node of all) {
        const sealed = [node.sshPrivateKeyEnc, node.realityPrivateKeyEnc];
        if (sealed.every((value) => box.isCurrent(value))) continue;
        const [ssh, reality] = sealed.map((value) => box.seal(box.open(value)));
        await nodes.replaceSecrets(node.id, {
          sshPrivateKeyEnc: ssh,
          realityPrivateKeyEnc: reality,
        });
        resealed += 1;
      }
      return { resealed, total: all.length };
    });
    process.stdout.write(
      `resealed the keys of ${counts.resealed} of ${counts.total} nodes under the current DATA_ENCRYPTION_KEY\n`,
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
