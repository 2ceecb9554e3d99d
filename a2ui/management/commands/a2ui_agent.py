"""Register, list and revoke agents: ``manage.py a2ui_agent create|list|revoke|rotate``."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from a2ui.models import Agent
from a2ui.sessions import agents as agent_service


class Command(BaseCommand):
    help = "Manage registered agents. The key of a new agent is printed once and never again."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Register an agent and print its key once.")
        create.add_argument("name")
        create.add_argument("--owner", help="Username of the agent's owner.")
        create.add_argument("--display-name", default="")
        create.add_argument("--max-sessions", type=int, default=None)
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

    def do_create(self, name, owner=None, display_name="", max_sessions=None, **_):
        owner_obj = None
        if owner:
            try:
                owner_obj = get_user_model().objects.get_by_natural_key(owner)
            except get_user_model().DoesNotExist:
                raise CommandError(f"No user named {owner!r}.") from None
        if max_sessions is not None and max_sessions <= 0:
            raise CommandError("--max-sessions must be a positive integer.")
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

    def do_list(self, **_):
        for agent in Agent.objects.select_related("owner"):
            state = "active" if agent.is_active else "revoked"
            owner = agent.owner.get_username() if agent.owner else "-"
            self.stdout.write(
                f"{agent.pk}\t{agent.name}\t{state}\towner={owner}\tkey={agent.key_prefix}..."
            )

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
