import { Migration } from '@mikro-orm/migrations';

export class Migration20261125170238 extends Migration {

  override name = 'Migration20261125170238';

  override up(): void | Promise<void> {
    this.addSql(`create table "pledges" ("id" uuid not null, "created_at" timestamptz not null, "modified_at" timestamptz null, "organization_id" uuid not null, "repository_id" uuid not null, "issue_id" uuid not null, "issue_number" int not null, "issue_title" varchar(255) not null, "amount" int not null, "currency" varchar(3) not null default 'usd', "state" text not null, "type" text not null, "pledger_name" varchar(255) not null, "pledger_github_username" varchar(255) null, "pledger_avatar_url" text null, "refunded_at" timestamptz null, "scheduled_payout_at" timestamptz null, "hosted_invoice_url" text null, primary key ("id"));`);
    this.addSql(`create index "pledges_organization_id_index" on "pledges" ("organization_id");`);
    this.addSql(`create index "pledges_repository_id_index" on "pledges" ("repository_id");`);
    this.addSql(`create index "pledges_repository_id_issue_number_index" on "pledges" ("repository_id", "issue_number");`);


    this.addSql(`alter table "pledges" add constraint "pledges_organization_id_foreign" foreign key ("organization_id") references "organizations" ("id") on delete cascade;`);
    this.addSql(`alter table "pledges" add constraint "pledges_repository_id_foreign" foreign key ("repository_id") references "repositories" ("id") on delete cascade;`);
    this.addSql(`alter table "pledges" add constraint "pledges_state_check" check ("state" in ('initiated', 'created', 'pending', 'refunded', 'disputed', 'charge_disputed', 'cancelled'));`);
    this.addSql(`alter table "pledges" add constraint "pledges_type_check" check ("type" in ('pay_upfront', 'pay_on_completion', 'pay_directly'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "pledges" cascade;`);

  }

}
