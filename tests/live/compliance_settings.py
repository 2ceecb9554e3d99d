"""Settings for the live compliance tests' servers: the project's, with required consents."""

from a2ui_project.settings import *  # noqa: F403
from a2ui_project.settings import A2UI as _A2UI

A2UI = {**_A2UI, "REQUIRED_CONSENTS": ["data_collection"]}
