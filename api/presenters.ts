// Response shapes shared by several resources (specification part 2).
import type { Exchange, Organization } from '../domain/reference/repository.ts';
import type { User } from '../domain/accounts/users.ts';

export const presentUser = (u: User) => ({
  id: u.id,
  username: u.username,
  email: u.email,
  first_name: u.first_name,
  last_name: u.last_name,
});

export const presentExchange = (e: Exchange) => ({ slug: e.slug, name: e.name, icon_url: e.icon_url });

/** Organization reference (specification 2.1). */
export const presentOrganization = (o: Pick<Organization, 'slug' | 'name'>) => ({ slug: o.slug, name: o.name });
