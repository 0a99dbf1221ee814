import { Body, Controller, HttpCode, Param, Post, Req, UseGuards } from '@nestjs/common';
import {
  ApiCookieAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import type { Request } from 'express';
import type { AuthUser } from '../common/auth/auth-user';
import { type CookieWriter, Cookies, REFRESH_COOKIE } from '../common/auth/cookies';
import { CurrentUser } from '../common/auth/current-user.decorator';
import { CookieAuthenticated } from '../common/auth/origin.guard';
import { LoginThrottlerGuard } from '../common/auth/throttler.guard';
import { AppError } from '../common/errors';
import { Public } from '../common/public.decorator';
import { UsersService } from '../users/users.service';
import { AuthService } from './auth.service';
import {
  AdminLoginRequest,
  ExchangeRequest,
  LoginCodeResponse,
  PollLoginCodeRequest,
  PollLoginCodeResponse,
  SeedCreatedResponse,
  SeedLoginRequest,
  SeedLoginResponse,
  TelegramLoginRequest,
  UserEnvelope,
} from './dto/auth.dto';
import { type IssuedSession, SessionsService } from './sessions.service';

const LOGIN_CODE = /^[A-Za-z0-9_-]{1,64}$/;

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly sessions: SessionsService,
    private readonly users: UsersService,
  ) {}

  @Public()
  @Post('seed')
  @ApiCreatedResponse({ type: SeedCreatedResponse })
  async createSeed(@Cookies() cookies: CookieWriter): Promise<SeedCreatedResponse> {
    const { seed, session } = await this.auth.createSeedAccount();
    return { seed, ...(await this.signedIn(cookies, session)), access_token: session.accessToken };
  }

  @Public()
  @Post('seed/login')
  @HttpCode(200)
  @ApiOkResponse({ type: SeedLoginResponse })
  async seedLogin(
    @Body() body: SeedLoginRequest,
    @Cookies() cookies: CookieWriter,
  ): Promise<SeedLoginResponse> {
    const { session } = await this.auth.loginWithSeed(body.seed);
    return { ...(await this.signedIn(cookies, session)), access_token: session.accessToken };
  }

  @Public()
  @Post('telegram')
  @HttpCode(200)
  @ApiOkResponse({ type: UserEnvelope })
  async telegram(
    @Body() body: TelegramLoginRequest,
    @Cookies() cookies: CookieWriter,
  ): Promise<UserEnvelope> {
    const { session } = await this.auth.loginWithTelegram(body);
    return this.signedIn(cookies, session);
  }

  @Public()
  @Post('bot/login-codes')
  @ApiCreatedResponse({ type: LoginCodeResponse })
  createLoginCode(): Promise<LoginCodeResponse> {
    return this.auth.createLoginCode();
  }

  @Public()
  @Post('bot/login-codes/:code/poll')
  @HttpCode(200)
  @ApiOkResponse({ type: PollLoginCodeResponse })
  pollLoginCode(
    @Param('code') code: string,
    @Body() body: PollLoginCodeRequest,
  ): Promise<PollLoginCodeResponse> {
    if (!LOGIN_CODE.test(code)) throw new AppError('NOT_FOUND', 'no such login code');
    return this.auth.pollLoginCode(code, body.poll_secret);
  }

  @Public()
  @Post('exchange')
  @HttpCode(200)
  @ApiOkResponse({ type: UserEnvelope })
  async exchange(
    @Body() body: ExchangeRequest,
    @Cookies() cookies: CookieWriter,
  ): Promise<UserEnvelope> {
    const { session } = await this.auth.exchange(body.bootstrap_token);
    return this.signedIn(cookies, session);
  }

  @Public()
  @CookieAuthenticated()
  @Post('refresh')
  @HttpCode(200)
  @ApiCookieAuth('refresh_token')
  @ApiOkResponse({ type: UserEnvelope })
  async refresh(@Req() request: Request, @Cookies() cookies: CookieWriter): Promise<UserEnvelope> {
    const token = (request.cookies as Record<string, unknown> | undefined)?.[REFRESH_COOKIE];
    try {
      const session = await this.auth.refresh(typeof token === 'string' ? token : undefined);
      return await this.signedIn(cookies, session);
    } catch (error) {
      // A refresh that failed leaves nothing usable behind in the browser.
      this.sessions.clearCookies(cookies);
      throw error;
    }
  }

  @Post('logout')
  @HttpCode(204)
  @ApiCookieAuth()
  @ApiNoContentResponse()
  async logout(@CurrentUser() caller: AuthUser, @Cookies() cookies: CookieWriter): Promise<void> {
    await this.sessions.revoke(caller.sessionId);
    this.sessions.clearCookies(cookies);
  }

  @Public()
  @UseGuards(LoginThrottlerGuard)
  @Post('admin/login')
  @HttpCode(200)
  @ApiOkResponse({ type: UserEnvelope })
  @ApiTooManyRequestsResponse({ description: 'too many attempts; see Retry-After' })
  async adminLogin(
    @Body() body: AdminLoginRequest,
    @Cookies() cookies: CookieWriter,
  ): Promise<UserEnvelope> {
    const { session } = await this.auth.loginStaff(body.username, body.password);
    return this.signedIn(cookies, session);
  }

  private async signedIn(cookies: CookieWriter, session: IssuedSession): Promise<UserEnvelope> {
    this.sessions.setCookies(cookies, session);
    return { user: await this.users.view(session.userId) };
  }
}
