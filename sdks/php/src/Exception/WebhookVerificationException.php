<?php

declare(strict_types=1);

namespace Waytrack\Exception;

/** The request is not a webhook Waytrack signed with this secret (or it is too old or too new). */
final class WebhookVerificationException extends WaytrackException
{
}
