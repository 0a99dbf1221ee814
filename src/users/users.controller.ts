import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { toUserViewResponse, UserResponse } from './dto/user.response';
import { UsersService } from './users.service';

@ApiTags('users')
@Controller('users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get('me')
  @ApiOkResponse({ type: UserResponse })
  async me(@CurrentUser() caller: AuthUser): Promise<UserResponse> {
    // Authentication already read the caller with its limits, in the same statement.
    const view = caller.record
      ? this.users.viewOf(caller.record)
      : await this.users.view(caller.id);
    return toUserViewResponse(view);
  }
}
