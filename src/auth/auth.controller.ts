import { Body, Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import type { AuthUser } from './guards/auth-user';
import { type CookieWriter, Cookies, REFRESH_COOKIE } from './guards/cookies';
import { CurrentUser } from './guards/current-user.decorator';
import { CookieAuthenticated } from './guards/origin.guard';
import { AppError } from '../common/errors';
import { Public } from '../common/public.decorator';
import { RateLimited, type RateRule } from '../common/throttling/rate-limit.guard';
import { UsersService } from '../users/users.service';
import { toUserViewResponse } from '../users/dto/user.response';
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
import { StaffDevices } from './staff-devices';
import { STAFF_LOGIN } from './staff-login-throttles';
import { Answers } from '../common/openapi/answers';

const LOGIN_CODE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The public routes that make accounts, sessions or codes for anyone share one count per address,
 * and one for everyone together.
 */
const SIGNUP: RateRule[] = [
  { name: 'signup', limit: 'signupPerAddress', by: 'address' },
  { name: 'signup', limit: 'signupGlobal', by: 'global' },
];

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly sessions: SessionsService,
    private readonly users: UsersService,
    private readonly devices: StaffDevices,
  ) {}

  @Public()
  @RateLimited(...SIGNUP)
  @Post('seed')
  @ApiCreatedResponse({ type: SeedCreatedResponse })
  async createSeed(@Cookies() cookies: CookieWriter): Promise<SeedCreatedResponse> {
    const { seed, session } = await this.auth.createSeedAccount();
    return { seed, ...(await this.signedIn(cookies, session)), access_token: session.accessToken };
  }

  @Public()
  @RateLimited(
    { name: 'seed-login', limit: 'seedLoginPerAddress', by: 'address' },
    { name: 'seed-login', limit: 'seedLoginPerSeed', by: 'seed' },
  )
  @Answers('INVALID_CREDENTIALS', 'ACCOUNT_BLOCKED')
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
  @RateLimited(...SIGNUP)
  @Answers('TELEGRAM_AUTH_INVALID', 'ACCOUNT_BLOCKED')
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
  @RateLimited(...SIGNUP)
  @Post('bot/login-codes')
  @ApiCreatedResponse({ type: LoginCodeResponse })
  async createLoginCode(): Promise<LoginCodeResponse> {
    return LoginCodeResponse.from(await this.auth.createLoginCode());
  }

  @Public()
  @Answers('NOT_FOUND')
  @Post('bot/login-codes/:code/poll')
  @HttpCode(200)
  @ApiOkResponse({ type: PollLoginCodeResponse })
  async pollLoginCode(
    @Param('code') code: string,
    @Body() body: PollLoginCodeRequest,
  ): Promise<PollLoginCodeResponse> {
    if (!LOGIN_CODE.test(code)) throw new AppError('NOT_FOUND', 'no such login code');
    return PollLoginCodeResponse.from(await this.auth.pollLoginCode(code, body.poll_secret));
  }

  @Public()
  @Answers('BOOTSTRAP_INVALID', 'ACCOUNT_BLOCKED')
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
  @Answers('REFRESH_INVALID', 'REFRESH_REUSED', 'ACCOUNT_BLOCKED')
  @Post('refresh')
  @HttpCode(200)
  @ApiOkResponse({ type: UserEnvelope })
  async refresh(@Req() request: Request, @Cookies() cookies: CookieWriter): Promise<UserEnvelope> {
    const token = (request.cookies as Record<string, unknown> | undefined)?.[REFRESH_COOKIE];
    try {
      const session = await this.auth.refresh(typeof token === 'string' ? token : undefined);
      return await this.signedIn(cookies, session);
    } catch (error) {
      // A refresh that failed leaves nothing usable behind in the browser. One that came without
      // a refresh cookie touches no cookie: it has nothing to clear, and its answer may arrive
      // after a sign-in of the same browser has set new ones.
      if (typeof token === 'string') this.sessions.clearCookies(cookies);
      throw error;
    }
  }

  @Post('logout')
  @HttpCode(204)
  @ApiNoContentResponse()
  async logout(@CurrentUser() caller: AuthUser, @Cookies() cookies: CookieWriter): Promise<void> {
    await this.sessions.signOut(caller.sessionId);
    this.sessions.clearCookies(cookies);
  }

  @Public()
  @RateLimited(...STAFF_LOGIN)
  @Answers('INVALID_CREDENTIALS', 'ACCOUNT_BLOCKED', 'TOTP_REQUIRED', 'TOTP_INVALID')
  @Post('admin/login')
  @HttpCode(200)
  @ApiOkResponse({ type: UserEnvelope })
  async adminLogin(
    @Body() body: AdminLoginRequest,
    @Req() request: Request,
    @Cookies() cookies: CookieWriter,
  ): Promise<UserEnvelope> {
    const { user, session } = await this.auth.loginStaff(body.username, body.password, {
      code: body.totp_code,
      recoveryCode: body.recovery_code,
    });
    this.devices.remember(
      cookies,
      request.cookies as Record<string, unknown> | undefined,
      user.username ?? body.username.toLowerCase(),
    );
    return this.signedIn(cookies, session);
  }

  private async signedIn(cookies: CookieWriter, session: IssuedSession): Promise<UserEnvelope> {
    this.sessions.setCookies(cookies, session);
    return { user: toUserViewResponse(await this.users.view(session.userId)) };
  }
}
