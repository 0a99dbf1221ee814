import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { OwnerGuard } from '../auth/guards/role.guards';
import { AuditService } from './audit.service';
import { mapPage } from '../common/pagination';
import { AuditPage, AuditQuery, toAuditEntryResponse } from './dto/audit.dto';

@ApiTags('admin')
@Controller('admin/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @UseGuards(OwnerGuard)
  @ApiOkResponse({ type: AuditPage })
  async list(@Query() query: AuditQuery): Promise<AuditPage> {
    const filter = {
      action: query.action,
      actorId: query.actor_id,
      targetType: query.target_type,
      targetId: query.target_id,
    };
    return mapPage(await this.audit.list(filter, query), toAuditEntryResponse);
  }
}
