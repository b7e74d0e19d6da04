<?php

declare(strict_types=1);

namespace Waytrack\Exception;

/** The parent of every error this library throws, so one `catch` can handle them all. */
abstract class WaytrackException extends \RuntimeException
{
}
