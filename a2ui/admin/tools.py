"""The compliance tools on the admin's index: the default admin site shows
``admin/a2ui/index.html`` (Django's index with a "Compliance" module above the apps: Verify
the trail, A person's data, Who may erase, each to those allowed) unless the project gave its
site an index template of its own."""

from django.contrib import admin

INDEX_TEMPLATE = "admin/a2ui/index.html"

if admin.site.index_template is None:
    admin.site.index_template = INDEX_TEMPLATE
