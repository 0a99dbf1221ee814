import { User } from './entities/user.entity';

/** The entities of users/: UsersModule registers them, src/entities.ts joins them for the CLI. */
export const USERS_ENTITIES = [User];
