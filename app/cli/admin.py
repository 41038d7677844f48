"""`dsx admin`: API key management (keys are shown once, stored hashed)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

admin = typer.Typer(help="Administration: API keys.", no_args_is_help=True)
console = Console()


@admin.command("create-key")
def create_key(
    tenant: Annotated[str, typer.Option(help="Tenant (division) the key belongs to")],
    role: Annotated[list[str], typer.Option("--role", help="submitter | reviewer | admin (repeatable)")],
    name: Annotated[str, typer.Option(help="Who or what holds the key")] = "unnamed",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Create an API key; the key is printed once and stored only as a hash."""
    from app import migrate
    from app.auth import keys as auth
    from app.db import session_scope
    from app.errors import DsxError

    migrate.upgrade()
    try:
        with session_scope() as session:
            issued = auth.create_key(session, tenant=tenant, roles=role, name=name)
    except DsxError as exc:
        console.print(f"[bold red]error:[/] {exc.detail}")
        raise typer.Exit(2) from None
    if as_json:
        print(json.dumps({"id": issued.id, "key": issued.key, "tenant": issued.tenant, "roles": list(issued.roles),
                          "name": issued.name}))
        return
    console.print(f"key {issued.id} for tenant {issued.tenant} ({', '.join(issued.roles)}):")
    console.print(issued.key, soft_wrap=True)
    console.print("[dim]Store it now: it cannot be shown again.[/]")


@admin.command("list-keys")
def list_keys() -> None:
    """List keys (never their secret)."""
    from app.auth import keys as auth
    from app.db import session_scope

    table = Table("id", "name", "tenant", "roles", "created", "revoked")
    with session_scope() as session:
        for row in auth.list_keys(session):
            table.add_row(str(row.id), row.name, row.tenant, ",".join(row.roles or []), str(row.created_at)[:19],
                          str(row.revoked_at)[:19] if row.revoked_at else "")
    console.print(table)


@admin.command("revoke-key")
def revoke_key(key_id: Annotated[int, typer.Argument(help="Key id from list-keys")]) -> None:
    """Revoke a key at once."""
    from app.auth import keys as auth
    from app.db import session_scope

    with session_scope() as session:
        if not auth.revoke(session, key_id):
            console.print(f"[bold red]error:[/] no active key {key_id}")
            raise typer.Exit(2)
    console.print(f"revoked key {key_id}")


def register(app: typer.Typer) -> None:
    app.add_typer(admin, name="admin")
