import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import {
  ApiCookieAuth,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user';
import { CurrentUser } from '../common/auth/current-user.decorator';
import { StaffGuard } from '../common/auth/role.guards';
import { UuidPipe } from '../common/validation';
import { SubscriptionView } from '../users/dto/user.response';
import { BillingService } from './billing.service';
import { AdminInvoicePageQuery, CreateInvoiceRequest, InvoicePageQuery } from './dto/invoice.dto';
import {
  ConfirmationResponse,
  InvoicePageResponse,
  InvoiceResponse,
  TelegramPaymentView,
  TonPaymentView,
} from './dto/invoice.response';

@ApiTags('billing')
@ApiCookieAuth()
@ApiExtraModels(TonPaymentView, TelegramPaymentView)
@Controller('invoices')
export class InvoicesController {
  constructor(private readonly billing: BillingService) {}

  @Post()
  @ApiCreatedResponse({ type: InvoiceResponse })
  create(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreateInvoiceRequest,
  ): Promise<InvoiceResponse> {
    return this.billing.createInvoice(caller.id, {
      planName: body.plan_name,
      currency: body.currency,
      provider: body.provider,
    });
  }

  @Get()
  @ApiOkResponse({ type: InvoicePageResponse, description: 'own invoices, newest first' })
  list(
    @CurrentUser() caller: AuthUser,
    @Query() query: InvoicePageQuery,
  ): Promise<InvoicePageResponse> {
    return this.billing.ownInvoices(caller.id, query);
  }

  @Get(':id')
  @ApiOkResponse({ type: InvoiceResponse, description: "another user's invoice is 404" })
  get(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<InvoiceResponse> {
    return this.billing.ownInvoice(caller.id, id);
  }

  @Post(':id/confirm')
  @HttpCode(200)
  @ApiOkResponse({
    type: ConfirmationResponse,
    description: '409 PAYMENT_NOT_FOUND while unpaid; 409 INVOICE_NOT_PENDING once paid',
  })
  confirm(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<ConfirmationResponse> {
    return this.billing.confirm(caller.id, id);
  }
}

@ApiTags('billing')
@ApiCookieAuth()
@UseGuards(StaffGuard)
@Controller('admin/invoices')
export class AdminInvoicesController {
  constructor(private readonly billing: BillingService) {}

  @Get()
  @ApiOkResponse({ type: InvoicePageResponse, description: 'newest first' })
  list(@Query() query: AdminInvoicePageQuery): Promise<InvoicePageResponse> {
    return this.billing.allInvoices(
      { status: query.status, userId: query.user_id?.toLowerCase() },
      { limit: query.limit, cursor: query.cursor },
    );
  }
}

/** `POST /users/me/trial` lives with billing: it starts a subscription. */
@ApiTags('users')
@ApiCookieAuth()
@Controller('users')
export class TrialController {
  constructor(private readonly billing: BillingService) {}

  @Post('me/trial')
  @HttpCode(200)
  @ApiOkResponse({
    type: SubscriptionView,
    description: '403 TRIAL_TELEGRAM_ONLY; 409 TRIAL_USED',
  })
  start(@CurrentUser() caller: AuthUser): Promise<SubscriptionView> {
    return this.billing.startTrial(caller.id);
  }
}
