import { AppSetting } from './app-setting.entity';

/**
 * The entities of settings-store/: SettingsStoreModule registers them, src/entities.ts joins
 * them for the CLI.
 */
export const SETTINGS_STORE_ENTITIES = [AppSetting];
