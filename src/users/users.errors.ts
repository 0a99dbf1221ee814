/** The data layer's NO_USER condition: a user addressed by id does not exist. */
export class NoUserCondition extends Error {
  constructor(readonly userId: string) {
    super(`NO_USER: ${userId}`);
    this.name = 'NoUserCondition';
  }
}

/** A username is already taken (the unique index refused it). */
export class UsernameTakenCondition extends Error {
  constructor(readonly username: string) {
    super(`username taken: ${username}`);
    this.name = 'UsernameTakenCondition';
  }
}

/** A partner code is already taken (the unique index UQ_users_partner_code refused it). */
export class PartnerCodeTakenCondition extends Error {
  constructor(readonly partnerCode: string | null) {
    super(`partner code taken: ${partnerCode ?? ''}`);
    this.name = 'PartnerCodeTakenCondition';
  }
}
