from rest_framework import serializers


class StreamTokenRequestSerializer(serializers.Serializer):
    token_type = serializers.ChoiceField(choices=())  # the served protocols' (see __init__)
    agent_id = serializers.CharField(
        required=False, max_length=64,
        help_text="The agent's id or name; default: A2UI['DEFAULT_AGENT'].",
    )

    def __init__(self, *args, **kwargs):
        from a2ui import tokens

        super().__init__(*args, **kwargs)
        # The types of the protocols served (each adapter's token_type).
        self.fields["token_type"].choices = list(tokens.stream_token_types())


class StreamTokenResponseSerializer(serializers.Serializer):
    token = serializers.CharField()
    expires_at = serializers.DateTimeField()
    token_type = serializers.CharField()


class JsonRpcNotificationSerializer(serializers.Serializer):
    jsonrpc = serializers.ChoiceField(choices=["2.0"])
    method = serializers.CharField()
    params = serializers.DictField()
