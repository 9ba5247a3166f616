B!features.3.block.0.1.running_meanJ`OwŒ¸_9Ğ¹ìhì6›ƒ28EU$9et®¹j[~9/08Ò‹¾9LÏ9h¸Osö8|Öm¸¿g‚9Åvÿ8"Ñ€¸
v¢¸ó¸£U7ûÇí¸ì×ƒ9¢¾{9Él¸