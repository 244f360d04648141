#!/bin/sh
# A coder that waits for a login in a browser, as aider 0.86 does with no API key: it says
# so, then sleeps (up to 5 minutes for aider; longer here, so only a stop ends it early).
echo "No LLM model was specified and no API keys were provided."
echo "OpenRouter provides free and paid access to many LLMs."
echo "Login to OpenRouter or create a free account? (Y)es/(N)o [Yes]: y"
echo "Please open this URL in your browser to connect Aider with OpenRouter:"
echo "https://openrouter.ai/auth?callback_url=http://localhost:8484/callback/aider"
echo "Waiting up to 5 minutes for you to finish in the browser..."
sleep 600
