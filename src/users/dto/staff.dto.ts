import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';

export const USERNAME_PATTERN = /^[a-z0-9_.-]{3,32}$/;

/** A new staff account's credentials. */
export class StaffCredentials {
  @ApiProperty({ example: 'alice', description: '3 to 32 of a-z 0-9 _ . -' })
  @IsString()
  @Matches(USERNAME_PATTERN, { message: 'must be 3 to 32 of a-z, 0-9, _, . and -' })
  username: string;

  @ApiProperty({ format: 'password', minLength: 12, maxLength: 128 })
  @IsString()
  @Length(12, 128, { message: 'must be 12 to 128 characters' })
  password: string;
}
