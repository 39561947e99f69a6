import { Migration } from '@mikro-orm/migrations';

export class Migration20261122043437 extends Migration {

  override name = 'Migration20261122043437';

  override up(): void | Promise<void> {
    this.addSql(`create table "workflow_starts" ("id" uuid not null, "created_at" timestamptz not null, "workflow_type" varchar(255) not null, "workflow_id" varchar(255) not null, "task_queue" varchar(255) not null, "args" jsonb not null, "started_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "workflow_starts_workflow_id_index" on "workflow_starts" ("workflow_id");`);
    this.addSql(`create index "workflow_starts_started_at_index" on "workflow_starts" ("started_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "workflow_starts" cascade;`);
  }

}
