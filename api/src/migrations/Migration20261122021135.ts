import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021135 extends Migration {

  override name = 'Migration20261122021135';

  override up(): void | Promise<void> {
    this.addSql(`create table "sandbox_charges" ("id" varchar(255) not null, "customer_id" varchar(255) not null, "payment_method_id" varchar(255) null, "amount" int not null, "currency" varchar(3) not null, "status" text not null, "failure_code" varchar(255) null, "decline_code" varchar(255) null, "failure_message" varchar(255) null, "refunded_amount" int not null default 0, "idempotency_key" varchar(255) not null, "metadata" jsonb not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "sandbox_charges_customer_id_index" on "sandbox_charges" ("customer_id");`);
    this.addSql(`alter table "sandbox_charges" add constraint "sandbox_charges_idempotency_key_unique" unique ("idempotency_key");`);

    this.addSql(`create table "sandbox_confirmation_tokens" ("id" varchar(255) not null, "brand" varchar(255) not null, "last4" varchar(255) not null, "exp_month" int not null, "exp_year" int not null, "outcome" text not null, "used_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);

    this.addSql(`create table "sandbox_customers" ("id" varchar(255) not null, "email" varchar(255) not null, "name" varchar(255) null, "idempotency_key" varchar(255) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "sandbox_customers" add constraint "sandbox_customers_idempotency_key_unique" unique ("idempotency_key");`);

    this.addSql(`create table "sandbox_payment_methods" ("id" varchar(255) not null, "customer_id" varchar(255) not null, "brand" varchar(255) not null, "last4" varchar(255) not null, "exp_month" int not null, "exp_year" int not null, "outcome" text not null, "idempotency_key" varchar(255) null, "detached_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "sandbox_payment_methods_customer_id_index" on "sandbox_payment_methods" ("customer_id");`);
    this.addSql(`alter table "sandbox_payment_methods" add constraint "sandbox_payment_methods_idempotency_key_unique" unique ("idempotency_key");`);

    this.addSql(`create table "sandbox_refunds" ("id" varchar(255) not null, "charge_id" varchar(255) not null, "amount" int not null, "idempotency_key" varchar(255) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "sandbox_refunds_charge_id_index" on "sandbox_refunds" ("charge_id");`);
    this.addSql(`alter table "sandbox_refunds" add constraint "sandbox_refunds_idempotency_key_unique" unique ("idempotency_key");`);

    this.addSql(`alter table "sandbox_charges" add constraint "sandbox_charges_status_check" check ("status" in ('succeeded', 'failed'));`);

    this.addSql(`alter table "sandbox_confirmation_tokens" add constraint "sandbox_confirmation_tokens_outcome_check" check ("outcome" in ('succeed', 'generic_decline', 'insufficient_funds', 'expired_card', 'incorrect_cvc', 'charge_fails', 'test_mode_live_card'));`);

    this.addSql(`alter table "sandbox_payment_methods" add constraint "sandbox_payment_methods_outcome_check" check ("outcome" in ('succeed', 'generic_decline', 'insufficient_funds', 'expired_card', 'incorrect_cvc', 'charge_fails', 'test_mode_live_card'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "sandbox_charges" cascade;`);
    this.addSql(`drop table if exists "sandbox_confirmation_tokens" cascade;`);
    this.addSql(`drop table if exists "sandbox_customers" cascade;`);
    this.addSql(`drop table if exists "sandbox_payment_methods" cascade;`);
    this.addSql(`drop table if exists "sandbox_refunds" cascade;`);
  }

}
