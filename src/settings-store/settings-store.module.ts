import { Global, Module } from '@nestjs/common';
import { AppSettingsRepository } from './app-settings.repository';

@Global()
@Module({ providers: [AppSettingsRepository], exports: [AppSettingsRepository] })
export class SettingsStoreModule {}
