import { PageQuery } from '../../common/pagination';
import { ApiProperty } from '@nestjs/swagger';
import {
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
} from 'class-validator';
import {
  INVOICE_PROVIDERS,
  INVOICE_STATUSES,
  type InvoiceProvider,
  type InvoiceStatus,
} from '../entities/invoice.entity';
import { CURRENCY_CODE, PLAN_NAME } from './plan.dto';

export class CreateInvoiceRequest {
  @ApiProperty({ pattern: PLAN_NAME.source, example: 'monthly' })
  @IsString()
  @Matches(PLAN_NAME, { message: 'must match ^[a-z0-9_-]{1,32}$' })
  plan_name: string;

  @ApiProperty({
    pattern: CURRENCY_CODE.source,
    example: 'USD',
    description: 'the currency of the price; for `ton` the nanotons are converted from it',
  })
  @IsString()
  @Matches(CURRENCY_CODE, { message: 'must be an upper-case currency code such as USD' })
  currency: string;

  @ApiProperty({ enum: INVOICE_PROVIDERS })
  @IsIn(INVOICE_PROVIDERS)
  provider: InvoiceProvider;
}

export class InvoicePageQuery extends PageQuery {}

export class AdminInvoicePageQuery extends InvoicePageQuery {
  @ApiProperty({ required: false, enum: INVOICE_STATUSES })
  @IsOptional()
  @IsIn(INVOICE_STATUSES)
  status?: InvoiceStatus;

  @ApiProperty({ required: false, format: 'uuid' })
  @IsOptional()
  @IsUUID()
  user_id?: string;
}

export class AttachPaymentRequest {
  @ApiProperty({ description: 'the tx_ref of an unmatched payment', maxLength: 200 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  tx_ref: string;
}
