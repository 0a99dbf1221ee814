import { type DynamicModule, type Provider, type Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import { getRepositoryToken, TypeOrmModule } from '@nestjs/typeorm';
import { AppModule } from './app.module';
import { type Settings } from './config/settings';
import { ENTITIES } from './entities';

type ModuleImport = Type | DynamicModule;

/** The repository tokens of every `TypeOrmModule.forFeature` the app's modules import. */
function registeredRepositories(): unknown[] {
  const app = AppModule.forRoot({
    settings: { nodeEnv: 'test', logLevel: 'silent' } as Settings,
    databaseUrl: 'postgresql://app@127.0.0.1:1/app',
    schedule: false,
  });
  const seen = new Set<ModuleImport>();
  const tokens: unknown[] = [];
  const visit = (entry: ModuleImport): void => {
    if (seen.has(entry)) return;
    seen.add(entry);
    const dynamic = 'module' in entry ? entry : undefined;
    const module = dynamic?.module ?? (entry as Type);
    if (module === TypeOrmModule) {
      for (const provider of dynamic?.providers ?? []) {
        tokens.push((provider as Exclude<Provider, Type>).provide);
      }
    }
    const imports = [
      ...((Reflect.getMetadata(MODULE_METADATA.IMPORTS, module) as ModuleImport[] | undefined) ??
        []),
      ...((dynamic?.imports ?? []) as ModuleImport[]),
    ];
    imports.forEach(visit);
  };
  visit(app);
  return tokens;
}

describe('ENTITIES', () => {
  it('are the entities the feature modules register, each once', () => {
    const registered = registeredRepositories();
    expect(new Set(registered).size).toBe(registered.length);
    expect([...registered].sort()).toEqual(
      ENTITIES.map((entity) => getRepositoryToken(entity)).sort(),
    );
  });
});
