import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiCookieAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { OwnerGuard } from '../common/auth/role.guards';
import { AuditService } from './audit.service';
import { PageQuery } from '../common/pagination';
import { AuditPage } from './dto/audit.dto';

@ApiTags('admin')
@ApiCookieAuth()
@Controller('admin/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @UseGuards(OwnerGuard)
  @ApiOkResponse({ type: AuditPage })
  list(@Query() query: PageQuery): Promise<AuditPage> {
    return this.audit.list(query.limit, query.cursor);
  }
}
