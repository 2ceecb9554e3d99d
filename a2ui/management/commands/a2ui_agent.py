"""Register, list and revoke agents: ``manage.py a2ui_agent create|list|revoke|rotate``.

A remote agent (docs/remote-agents.md): ``create NAME --agui-url URL`` or ``--a2a-url URL``,
with ``--header "Name: value"`` (repeatable; values stored encrypted, never shown again);
``remote NAME [--url URL] [--header ...] [--no-headers]`` changes one; ``sync`` registers the
in-process agents of ``A2UI['AGENTS']``."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from a2ui.models import Agent
from a2ui.services import agents as agent_service


class Command(BaseCommand):
    help = "Manage registered agents. The key of a new agent is printed once and never again."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Register an agent and print its key once.")
        create.add_argument("name")
        create.add_argument("--owner", help="Username of the agent's owner.")
        create.add_argument("--display-name", default="")
        create.add_argument("--max-sessions", type=int, default=None)
        where = create.add_mutually_exclusive_group()
        where.add_argument("--agui-url", help="A remote AG-UI 1.0 agent: its endpoint.")
        where.add_argument("--a2a-url", help="A remote A2A agent: its base URL (the agent "
                                             "card is read from /.well-known/agent-card.json)"
                                             " or its card's URL.")
        create.add_argument("--header", action="append", default=[], metavar="'Name: value'",
                            help="A header sent to the remote agent (repeatable).")
        create.add_argument("--max-runs", type=int, default=None,
                            help="The remote agent's runs in flight at most.")
        remote = sub.add_parser("remote", help="Change a remote agent's URL or headers.")
        remote.add_argument("name")
        remote.add_argument("--url")
        remote.add_argument("--header", action="append", default=None,
                            metavar="'Name: value'", help="Replaces every header.")
        remote.add_argument("--no-headers", action="store_true", help="Remove every header.")
        remote.add_argument("--max-runs", type=int, default=None)
        sub.add_parser("sync", help="Register the in-process agents of A2UI['AGENTS'].")
        sub.add_parser("list", help="List agents.")
        revoke = sub.add_parser("revoke", help="Deactivate an agent and close its sockets.")
        revoke.add_argument("name")
        rotate = sub.add_parser("rotate", help="Issue a new key; the old one stops working.")
        rotate.add_argument("name")

    def handle(self, *args, action, **options):
        return getattr(self, f"do_{action}")(**options)

    def _agent(self, name):
        try:
            return Agent.objects.get(name=name)
        except Agent.DoesNotExist:
            raise CommandError(f"No agent named {name!r}.") from None

    def do_create(self, name, owner=None, display_name="", max_sessions=None, agui_url=None,
                  a2a_url=None, header=(), max_runs=None, **_):
        owner_obj = None
        if owner:
            try:
                owner_obj = get_user_model().objects.get_by_natural_key(owner)
            except get_user_model().DoesNotExist:
                raise CommandError(f"No user named {owner!r}.") from None
        if max_sessions is not None and max_sessions <= 0:
            raise CommandError("--max-sessions must be a positive integer.")
        if agui_url or a2a_url:
            return self._create_remote(name, "agui" if agui_url else "a2a", agui_url or a2a_url,
                                       header, owner_obj, display_name, max_sessions, max_runs)
        if header or max_runs is not None:
            raise CommandError("--header and --max-runs are for remote agents (--agui-url or "
                               "--a2a-url).")
        try:
            agent, key = agent_service.create(
                name, owner=owner_obj, display_name=display_name,
                max_concurrent_sessions=max_sessions,
            )
        except IntegrityError:
            raise CommandError(f"An agent named {name!r} already exists.") from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Agent {agent.name!r} created (id {agent.pk}).")
        self.stdout.write("Its key, shown only now; store it safely:")
        self.stdout.write(key)

    def _create_remote(self, name, kind, url, header, owner, display_name, max_sessions,
                       max_runs):
        from a2ui.remote import registry

        try:
            agent = registry.create(name, kind, url, registry.parse_headers(header),
                                    owner=owner, display_name=display_name,
                                    max_sessions=max_sessions, max_runs=max_runs)
        except registry.Refused as exc:
            raise CommandError(str(exc)) from None
        names = ", ".join(agent.remote.header_names) or "none"
        self.stdout.write(f"Remote agent {agent.name!r} created (id {agent.pk}, "
                          f"{kind} at {agent.remote.url}; headers: {names}).")

    def do_remote(self, name, url=None, header=None, no_headers=False, max_runs=None, **_):
        from a2ui.remote import registry

        agent = self._agent(name)
        try:
            headers = {} if no_headers else (registry.parse_headers(header)
                                             if header is not None else None)
            registry.update(agent, url=url, headers=headers, max_runs=max_runs)
        except registry.Refused as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Remote agent {name!r} updated.")

    def do_sync(self, **_):
        from a2ui.remote import registry

        names = registry.sync_in_process()
        self.stdout.write(f"In-process agents: {', '.join(names) or 'none'}.")

    def do_list(self, **_):
        from a2ui.remote import registry

        for agent in Agent.objects.select_related("owner", "remote"):
            state = "active" if agent.is_active else "revoked"
            owner = agent.owner.get_username() if agent.owner else "-"
            line = f"{agent.pk}\t{agent.name}\t{state}\towner={owner}\tkey={agent.key_prefix}..."
            remote = registry.describe(agent)
            if remote is not None:
                line += (f"\t{remote['kind']}={remote['url'] or remote['in_process']}"
                         f"\theaders={','.join(remote['headers']) or '-'}")
            self.stdout.write(line)

    def do_revoke(self, name, **_):
        agent = self._agent(name)
        if not agent.is_active:
            raise CommandError(f"Agent {name!r} is already revoked.")
        agent_service.revoke(agent)
        self.stdout.write(f"Agent {name!r} revoked; its key is refused from now on.")

    def do_rotate(self, name, **_):
        agent = self._agent(name)
        key = agent_service.rotate(agent)
        self.stdout.write(f"New key for {name!r}, shown only now:")
        self.stdout.write(key)
