import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditController } from './audit.controller';
import { AuditRepository } from './audit.repository';
import { AuditService } from './audit.service';
import { AUDIT_ENTITIES } from './audit.entities';

/** The audit log. Features import it and call `AuditService.record` inside their transactions. */
@Module({
  imports: [TypeOrmModule.forFeature(AUDIT_ENTITIES)],
  controllers: [AuditController],
  providers: [AuditRepository, AuditService],
  exports: [AuditService],
})
export class AuditModule {}
