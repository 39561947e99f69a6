/** Every entity the ORM knows. */
import { Account, Session, User } from './auth/entities.ts';
import { Member, Organization, OrganizationAccessToken } from './modules/organizations/entities.ts';
import { Product, ProductPrice } from './modules/products/entities.ts';
import { Notification } from './modules/notifications/entities.ts';

export const entities = [User, Account, Session, Organization, Member, OrganizationAccessToken, Product, ProductPrice, Notification];
