import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppSettingsRepository } from './app-settings.repository';
import { SETTINGS_STORE_ENTITIES } from './settings-store.entities';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature(SETTINGS_STORE_ENTITIES)],
  providers: [AppSettingsRepository],
  exports: [AppSettingsRepository],
})
export class SettingsStoreModule {}
