import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { OwnerGuard } from '../common/auth/role.guards';
import { AuditService } from './audit.service';
import { mapPage, PageQuery } from '../common/pagination';
import { AuditPage, toAuditEntryResponse } from './dto/audit.dto';

@ApiTags('admin')
@Controller('admin/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @UseGuards(OwnerGuard)
  @ApiOkResponse({ type: AuditPage })
  async list(@Query() query: PageQuery): Promise<AuditPage> {
    return mapPage(await this.audit.list(query), toAuditEntryResponse);
  }
}
