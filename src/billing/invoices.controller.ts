import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { mapPage } from '../common/pagination';
import { ApiCreatedResponse, ApiExtraModels, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { StaffGuard } from '../auth/guards/role.guards';
import { ThrottleAddress } from '../common/throttling/client-address';
import { UuidPipe } from '../common/validation';
import { BillingService } from './billing.service';
import {
  AdminInvoicePageQuery,
  AttachPaymentRequest,
  CreateInvoiceRequest,
  InvoicePageQuery,
} from './dto/invoice.dto';
import { PageQuery } from '../common/pagination';
import {
  toUnmatchedPaymentResponse,
  UnmatchedPaymentPageResponse,
} from './dto/unmatched-payment.response';
import { UnmatchedPaymentsService } from './unmatched-payments.service';
import {
  ConfirmationResponse,
  InvoicePageResponse,
  InvoiceResponse,
  TelegramPaymentView,
  toConfirmationResponse,
  toInvoiceResponse,
  TonPaymentView,
} from './dto/invoice.response';
import { Answers } from '../common/openapi/answers';

@ApiTags('billing')
@ApiExtraModels(TonPaymentView, TelegramPaymentView)
@Controller('invoices')
export class InvoicesController {
  constructor(private readonly billing: BillingService) {}

  @Answers('UPSTREAM_UNAVAILABLE', 'RATE_LIMITED')
  @Post()
  @ApiCreatedResponse({
    type: InvoiceResponse,
    description:
      '429 RATE_LIMITED (Retry-After) past RATE_INVOICES_PER_ACCOUNT or RATE_INVOICES_PER_ADDRESS',
  })
  async create(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreateInvoiceRequest,
    @ThrottleAddress() address: string | null,
  ): Promise<InvoiceResponse> {
    const invoice = await this.billing.createInvoice(
      caller.id,
      { planName: body.plan_name, currency: body.currency, provider: body.provider },
      address,
    );
    return toInvoiceResponse(invoice);
  }

  @Get()
  @ApiOkResponse({ type: InvoicePageResponse, description: 'own invoices, newest first' })
  async list(
    @CurrentUser() caller: AuthUser,
    @Query() query: InvoicePageQuery,
  ): Promise<InvoicePageResponse> {
    return mapPage(await this.billing.ownInvoices(caller.id, query), toInvoiceResponse);
  }

  @Answers('NOT_FOUND')
  @Get(':id')
  @ApiOkResponse({ type: InvoiceResponse, description: "another user's invoice is 404" })
  async get(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<InvoiceResponse> {
    return toInvoiceResponse(await this.billing.ownInvoice(caller.id, id));
  }

  @Answers('NOT_FOUND', 'PAYMENT_NOT_FOUND', 'INVOICE_NOT_PENDING', 'UPSTREAM_UNAVAILABLE')
  @Post(':id/confirm')
  @HttpCode(200)
  @ApiOkResponse({
    type: ConfirmationResponse,
    description: '409 PAYMENT_NOT_FOUND while unpaid; 409 INVOICE_NOT_PENDING once paid',
  })
  async confirm(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<ConfirmationResponse> {
    return toConfirmationResponse(await this.billing.confirm(caller.id, id));
  }
}

@ApiTags('billing')
@UseGuards(StaffGuard)
@Controller('admin/invoices')
export class AdminInvoicesController {
  constructor(
    private readonly billing: BillingService,
    private readonly unmatched: UnmatchedPaymentsService,
  ) {}

  @Get()
  @ApiOkResponse({ type: InvoicePageResponse, description: 'newest first' })
  async list(@Query() query: AdminInvoicePageQuery): Promise<InvoicePageResponse> {
    const page = await this.billing.allInvoices(
      { status: query.status, userId: query.user_id?.toLowerCase() },
      { limit: query.limit, cursor: query.cursor },
    );
    return mapPage(page, toInvoiceResponse);
  }

  @Post(':id/attach-payment')
  @Answers('NOT_FOUND', 'INVOICE_NOT_PENDING', 'PAYMENT_TOO_SMALL', 'CONFLICT')
  @HttpCode(200)
  @ApiOkResponse({
    type: ConfirmationResponse,
    description:
      "pays the invoice (pending or expired) with an unmatched payment, once, audited; 409 INVOICE_NOT_PENDING when paid already; 409 PAYMENT_TOO_SMALL when the payment is less than the invoice's amount (no override); 409 CONFLICT for another provider or currency; 404 for an unknown or already used tx_ref",
  })
  async attachPayment(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: AttachPaymentRequest,
  ): Promise<ConfirmationResponse> {
    return toConfirmationResponse(await this.unmatched.attach(caller.id, id, body.tx_ref));
  }
}

@ApiTags('billing')
@UseGuards(StaffGuard)
@Controller('admin/payments')
export class AdminPaymentsController {
  constructor(private readonly unmatched: UnmatchedPaymentsService) {}

  @Get('unmatched')
  @ApiOkResponse({
    type: UnmatchedPaymentPageResponse,
    description: 'money received that paid no invoice, newest first',
  })
  async unmatchedList(@Query() query: PageQuery): Promise<UnmatchedPaymentPageResponse> {
    return mapPage(await this.unmatched.list(query), toUnmatchedPaymentResponse);
  }
}
