/** Every entity the ORM knows. */
import { Account, Session, User } from './auth/entities.ts';
import { Member, Organization, OrganizationAccessToken } from './modules/organizations/entities.ts';
import { Product, ProductPrice } from './modules/products/entities.ts';
import { Notification } from './modules/notifications/entities.ts';
import { OutboxEvent } from './modules/webhooks/entities.ts';
import { Customer } from './modules/customers/entities.ts';
import { File } from './modules/files/entities.ts';
import { Meter } from './modules/meters/entities.ts';

export const entities = [User, Account, Session, Organization, Member, OrganizationAccessToken, Product, ProductPrice, Notification, OutboxEvent, Customer, File, Meter];
