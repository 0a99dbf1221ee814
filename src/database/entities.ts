import { AppSetting } from '../settings-store/app-setting.entity';

/** Every entity of the service, listed once for the app, the tests and the TypeORM CLI. */
export const ENTITIES = [AppSetting];
