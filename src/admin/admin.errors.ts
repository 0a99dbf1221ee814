/** A partner code is already taken (the unique index UQ_users_partner_code refused it). */
export class PartnerCodeTakenCondition extends Error {
  constructor(readonly partnerCode: string | null) {
    super(`partner code taken: ${partnerCode ?? ''}`);
    this.name = 'PartnerCodeTakenCondition';
  }
}
